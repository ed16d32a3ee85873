"""Agent steps (docs/agent-steps.md): an LLM that calls tools in a loop, every call under policy, reviewed by people.

- spec.py: what an agent step says, checked when a definition is saved;
- conversation.py: the stored messages and the request fitted to the context budget;
- provider.py: the LLM interface (services/agents/llm.py speaks the OpenAI-compatible API);
- moves.py: what to do next, read from the conversation alone, and what the LLM's text says (markers, output);
- loop.py: the loop itself, over a Provider and a Host (services/agents/service.py: storage, policy, people, tools).
"""
