from course.durable import ReplayRecord, transcript_hash
import hashlib


def step_record(step, node, model, seen, reply, results):
    calls = [{"name": c["name"], "args": c["args"]} for c in reply.tool_calls]
    version = reply.response_metadata["model_version"]
    return ReplayRecord(step, node, model.name, version, transcript_hash(seen[-1:]), calls,
                        list(results))
