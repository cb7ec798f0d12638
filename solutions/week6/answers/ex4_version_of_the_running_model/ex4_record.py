from course.durable import ReplayRecord, transcript_hash
import hashlib


def step_record(step, node, model, seen, reply, results):
    calls = [{"name": c["name"], "args": c["args"]} for c in reply.tool_calls]
    return ReplayRecord(step, node, model.name, model.model_version,
                        transcript_hash(seen), calls, list(results))
