# sys.setrecursionlimit as CPython's, within the run's room: raised before a search a few hundred frames deep, lowered
# (RecursionError past it), refused below the depth it is called at, and its argument checked.
import sys
import numpy as np
sys.setrecursionlimit(10**6)
print(sys.getrecursionlimit())

def fill(grid, i, j):
    if i < 0 or j < 0 or i >= grid.shape[0] or j >= grid.shape[1] or grid[i, j]:
        return 0
    grid[i, j] = 1
    return 1 + fill(grid, i + 1, j) + fill(grid, i - 1, j) + fill(grid, i, j + 1) + fill(grid, i, j - 1)

print(fill(np.zeros((20, 20), dtype=int), 0, 0))

def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
print(depth(900))
sys.setrecursionlimit(100)
print(sys.getrecursionlimit())
try:
    depth(150)
except RecursionError as e:
    print("RecursionError", e)
print(depth(50))
for bad in (0, 2.5):
    try:
        sys.setrecursionlimit(bad)
    except (ValueError, TypeError) as e:
        print(type(e).__name__, e)
def deep(n):
    if n == 0:
        sys.setrecursionlimit(20)
    return deep(n - 1) if n > 0 else 0
try:
    deep(40)
except RecursionError as e:
    print("RecursionError", str(e).split(" at ")[0])     # (the depth counts a harness's frames too)
sys.setrecursionlimit(1000)
print(depth(900))
