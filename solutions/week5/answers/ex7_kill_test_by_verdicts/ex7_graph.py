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
    for node in ("email", "charge"):
        for point in ("before_effect", "after_effect"):
            result = harness.run(node, point)
            problems = [name for name in ("double_charge", "double_email", "lost")
                        if getattr(result, name)]
            if problems:
                raise AssertionError(f"{node}/{point}: {problems} ({result.verdict})")
    ### END SOLUTION
