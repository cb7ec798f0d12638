from course.cloudwave import build_graph
from course.cloudwave import parse, retrieve


def build_my_graph(world, checkpointer):
    """parse → retrieve → charge → email with my keyed nodes."""
    ### BEGIN SOLUTION
    nodes = {"parse": parse, "retrieve": retrieve, "email": email, "charge": charge}
    return build_graph(nodes, world=world, checkpointer=checkpointer)
    ### END SOLUTION
