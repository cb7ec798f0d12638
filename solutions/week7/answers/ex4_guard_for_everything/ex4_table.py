
PROTECTS = {
    "process killed after the booking": ("checkpointer", "guard"),
    "container restart": ("session resume", "guard"),
    "model changed mid-run": ("none", "guard"),
    "agent wrote a bad file": ("file rewind", "guard"),
    "retry after a lost response": ("none", "guard"),
}
