"""Agent steps: the loop of core/agent wired to storage, people and tools; the LLM provider.

service.py       an agent step's turns
replies.py       what a person's action tells an agent step
store.py         stored conversations
llm.py           the OpenAI-compatible provider
llm_provider.py  each workspace's own provider
models.py        AgentMessage, WorkspaceLLM
"""
