"""The official wording of the paper's judges and answerers, read at run time from pinned upstream files."""
