"""Interactive protocols of k parties (002 §2): transcripts, their exact privacy, and the optimal accuracy of any
protocol given as its transcript matrix."""
