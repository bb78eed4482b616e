"""The model layer: one cached OpenAI-compatible client, cost accounting, local serving."""
