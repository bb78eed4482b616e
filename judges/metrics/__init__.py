"""Judge-free metrics: retrieval ranks (recall, nDCG) and lexical answer overlap (F1, BLEU-1)."""
