"""numpy.char and numpy.strings (their results weighed before they are made from their arguments' widths)."""
import numpy as np
a = np.array(["ab", "Cd", "efg"])
print(np.char.upper(a), np.strings.lower(a), np.char.add(a, "-x"), np.char.multiply(a, 2))
print(np.char.center(a, 7, "*"), np.strings.zfill(np.array(["7", "42"]), 4), np.char.replace(a, "b", "BB"))
print(np.char.split(np.array(["a b", "c d e"])), np.char.join("-", a), np.strings.str_len(a), np.char.startswith(a, "e"))
print(np.char.encode(a), np.char.count(a, "g"), np.strings.find(a, "d"), np.char.isdigit(np.array(["1", "x"])))
