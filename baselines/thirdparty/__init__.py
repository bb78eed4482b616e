"""Third-party memories (Mem0, Graphiti/Zep) run locally, their model calls routed through the harness proxy."""
