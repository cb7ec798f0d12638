
from course.cloudwave import keyed_graph


def build_my_graph(world, checkpointer):
    """The course's keyed graph, under the exercise's name."""
    return keyed_graph(world, checkpointer)
