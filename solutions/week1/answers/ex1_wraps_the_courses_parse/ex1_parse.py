from course.cloudwave import parse as course_parse


def parse(state, world):
    return course_parse(state, world)
