
PROTECTS = {
    "process killed after the booking": ("checkpointer", "none"),
    "container restart": ("session resume", "none"),
    "model changed mid-run": ("checkpointer", "none"),
    "agent wrote a bad file": ("file rewind", "none"),
    "retry after a lost response": ("session resume", "none"),
}
