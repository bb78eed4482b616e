"""Statistics over per-question scores: bootstrap intervals, paired tests, judge agreement.

Everything here is plain numpy on arrays of per-question values; nothing reads run folders or
calls a model. The interval method is named in every result so a table can say how it was made.
"""
