from course.cloudwave.agent import model_identity
from course.durable import ReplayRecord, transcript_hash


def step_record(step, node, model, seen, reply, results):
    """The replay record of one step."""
    name, version = model_identity(model, reply)
    return ReplayRecord(step=step, node=node, model_name=name, model_version=version,
                        transcript_hash=transcript_hash(seen),
                        tool_calls=[{"name": c["name"], "args": c["args"]}
                                    for c in reply.tool_calls],
                        tool_results=list(results))
