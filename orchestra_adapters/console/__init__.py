"""Console adapters: the terminal interviewer, progress output, the answers file."""
