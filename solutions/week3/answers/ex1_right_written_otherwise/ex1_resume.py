from langgraph.errors import EmptyInputError
from langgraph.checkpoint.sqlite import SqliteSaver
import sqlite3


def durable_graph(nodes, world):
    """The support graph over these nodes, with a checkpointer (a file, this time)."""
    saver = SqliteSaver(sqlite3.connect(world.directory / "checkpoints.db",
                                        check_same_thread=False))
    return build_support_graph(nodes, world=world, checkpointer=saver)


def handle(graph, thread_id, message):
    """Try to carry the thread on; a thread with nothing saved has no input to resume."""
    config = {"configurable": {"thread_id": thread_id}}
    try:
        return graph.invoke(None, config, durability="sync")
    except EmptyInputError:  # nothing saved yet: this is the first delivery
        return graph.invoke({"thread_id": thread_id, "message": message}, config,
                            durability="sync")
