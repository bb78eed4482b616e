"""Sending a stage's uncached chat requests through a provider's batch API (OpenAI's Batch API,
Anthropic's Message Batches) instead of live calls; results fill the same cache under the same keys."""
