"""The official texts of the paper's judges and answerers: pinned, read at run time as data (an upstream
file parsed with ``ast``, or a templates file), filled by our code; no upstream code is run."""
