from course.cloudwave import build_graph
from course.cloudwave import parse, retrieve
from course.crash import CrashHarness


def build_my_graph(world, checkpointer):
    """parse → retrieve → charge → email with my keyed nodes."""
    ### BEGIN SOLUTION
    nodes = {"parse": parse, "retrieve": retrieve, "charge": charge, "email": email}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
    ### END SOLUTION


def my_kill_test(factory):
    """Kill the graph factory(world, checkpointer) builds where a repeated effect would show,
    resume it, and raise AssertionError unless it charged once and mailed once."""
    ### BEGIN SOLUTION
    harness = CrashHarness(factory, root=tempfile.mkdtemp(dir=LAB))
    killed = harness.run("charge", "after_effect")
    assert killed.status == "completed", killed.verdict
    assert killed.charges == 1, f"kill at charge: {killed.charges} charges"
    killed = harness.run("email", "after_effect")
    assert killed.status == "completed", killed.verdict
    assert killed.emails == 1, f"kill at email: {killed.emails} emails"
    ### END SOLUTION
