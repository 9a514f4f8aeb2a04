"""Turn orchestration (router, RLM/ReAct/direct programs, delegation, budgets, event bus).

Imports llm, sandbox, events and config — never store or api: persistence subscribes to runtime events.
"""
