"""The scripted model replies in order, binds tools, records questions, and says when it ran out."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from course.cloudwave.model import ScriptedChatModel, ScriptExhausted


def test_replies_in_order_with_tool_calls_and_records_what_it_was_asked():
    model = ScriptedChatModel.tool_calls(("book_flight", {"flight": "BCN-101"}), final="Booked.")
    bound = model.bind_tools([])
    first = bound.invoke([HumanMessage("Book Marta to Barcelona")])
    assert first.tool_calls[0]["name"] == "book_flight"
    assert first.tool_calls[0]["args"] == {"flight": "BCN-101"}
    assert first.response_metadata["model_version"] == "scripted-1"
    assert bound.invoke([HumanMessage("and?")]).content == "Booked."
    assert [m[0].content for m in model.asked] == ["Book Marta to Barcelona", "and?"]
    with pytest.raises(ScriptExhausted, match="add replies"):
        model.invoke([HumanMessage("more")])
