from course.durable import ReplayRecord, transcript_hash
import hashlib


def step_record(step, node, model, seen, reply, results):
    calls = [{"name": c["name"], "args": c["args"]} for c in reply.tool_calls]
    version = reply.response_metadata["model_version"]
    digest = hashlib.sha256(str(seen).encode()).hexdigest()
    return ReplayRecord(step, node, model.name, version, digest, calls, list(results))
