"""From the two runs to points: each cell's result, the findings, the gradebook, the ledger, the class's grades."""
