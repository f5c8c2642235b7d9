// Nothing: the answer is the round trip, after which the page's earlier events are in.
0
