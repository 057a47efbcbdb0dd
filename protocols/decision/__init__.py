"""The decision problem of 002 §2 (000 eqs. (9)-(14)) and its exact engines: likelihood factors, product-form XOR,
the worst-case linear program and the closed forms the engines are checked against."""
