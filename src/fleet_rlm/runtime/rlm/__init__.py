"""The RLM machinery on the host side: the observed sandbox interpreter, sub-LM calls and child RLMs."""
