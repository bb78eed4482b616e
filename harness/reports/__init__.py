"""Reports made from run folders: the paper's tables and figures."""
