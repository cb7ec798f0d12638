from course.cloudwave import build_graph
from course.cloudwave import parse, retrieve


def build_my_graph(world, checkpointer):
    """parse → retrieve → charge → email with my keyed nodes."""
    ### BEGIN SOLUTION
    from course.cloudwave import charge_keyed, email_keyed

    nodes = {"parse": parse, "retrieve": retrieve,
             "charge": charge_keyed, "email": email_keyed}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
    ### END SOLUTION
