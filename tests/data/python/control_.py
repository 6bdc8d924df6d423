def classify(v):
    match v:
        case 0:
            return "zero"
        case int(n) if n < 0:
            return "negative"
        case [x, y]:
            return f"pair {x},{y}"
        case {"k": val}:
            return f"dict {val}"
        case str() as text:
            return "text " + text
        case _:
            return "other"


print([classify(v) for v in (0, -3, [1, 2], {"k": 9}, "s", 3.5)])
data = [1, 2, 3, 4, 5, 6]
if (n := len(data)) > 5:
    print("long", n)
for i in range(10):
    if i % 2:
        continue
    if i > 6:
        break
    print(i, end=" ")
else:
    print("no break")
print()
k = 0
while k < 3:
    k += 1
else:
    print("while else", k)
for i in []:
    pass
else:
    print("empty for else")
matrix = [[1, 2, 3], [4, 5, 6]]
print([[row[i] for row in matrix] for i in range(3)], [x for row in matrix for x in row if x % 2])
print({x % 3 for x in range(10)}, {k: v for k, v in enumerate("ab")}, list(zip(*matrix)))
print(*range(3), sep=", ", end="!\n")
print("a", "b", sep="")
x = 5
y = "big" if x > 3 else "small"
print(y, not x, x and 0, x or 0, None is None, [] == [], [] is [])
import contextlib
with contextlib.nullcontext(3) as value:
    print("with", value)
del x
try:
    print(x)
except NameError as e:
    print("NameError:", e)
