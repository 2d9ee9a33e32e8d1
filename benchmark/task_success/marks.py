"""The fixed words the agent's and the user simulator's prompts open with, and the
conversation's markers: one place, read by the roles and by the scripted stub that
plays them (which must not import the LLM stack to tell them apart)."""

from __future__ import annotations

AGENT_MARK = "You are a customer-service agent who acts through tools."
USER_MARK = "You are role-playing a customer who contacts customer service."
TOOL_RESULT = "Tool result (call {id}):"
TICKET = "Your ticket: "
STOP = "###STOP###"  # what ends a conversation, said by the user (or the agent)
WAITING = "(the agent is waiting for you)"  # the user's prompt when the agent has not spoken
CONTINUE = "(continue)"  # the agent's prompt after its own reply, before the customer's
# A customer with tools of its own (telecom: its phone): the heading its prompt lists them
# under, and the scripted stub's words for asking it to use one and for reporting it did.
USER_TOOLS = "# Your own tools (JSON schemas)"
DEVICE_ASK = "Please do this on your device: "  # followed by {"name": ..., "arguments": ...}
DEVICE_DONE = "I did this on my device: "  # the same JSON; the tool's reply on the next line
