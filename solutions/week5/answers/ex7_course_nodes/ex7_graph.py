from course.cloudwave import build_graph
from course.cloudwave import parse, retrieve
from course.crash import CrashHarness


def build_my_graph(world, checkpointer):
    """parse → retrieve → charge → email with my keyed nodes."""
    ### BEGIN SOLUTION
    from course.cloudwave import charge_keyed, email_keyed

    nodes = {"parse": parse, "retrieve": retrieve,
             "charge": charge_keyed, "email": email_keyed}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
    ### END SOLUTION


def my_kill_test(factory):
    """Kill the graph factory(world, checkpointer) builds where a repeated effect would show,
    resume it, and raise AssertionError unless it charged once and mailed once."""
    ### BEGIN SOLUTION
    harness = CrashHarness(factory, root=tempfile.mkdtemp(dir=LAB))
    for node in ("charge", "email"):  # each write: its effect landed, nothing recorded yet
        result = harness.run(node, "after_effect")
        assert result.status == "completed", f"kill at {node}: {result.verdict}"
        assert (result.charges, result.emails) == (1, 1), (
            f"kill at {node}/after_effect: {result.charges} charge(s) and {result.emails} "
            "email(s), expected one of each")
    ### END SOLUTION
