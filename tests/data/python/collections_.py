from collections import Counter, OrderedDict, defaultdict, deque, namedtuple
import itertools
import copy

words = "the cat and the hat and the bat".split()
counts = Counter(words)
print(counts.most_common(2), counts["the"], counts["dog"])
groups = defaultdict(list)
for w in words:
    groups[len(w)].append(w)
print(dict(groups))
d = deque([1, 2, 3], maxlen=3)
d.append(4)
d.appendleft(0)
print(d, list(d))
Point = namedtuple("Point", ["x", "y"])
p = Point(1, 2)
print(p, p.x + p.y, p._replace(x=5), p._asdict())
od = OrderedDict(a=1, b=2)
od.move_to_end("a")
print(list(od))
print(list(itertools.chain([1], [2, 3])), list(itertools.product("ab", repeat=2)))
print(list(itertools.combinations(range(4), 2)), list(itertools.islice(itertools.count(5), 3)))
print([(k, list(g)) for k, g in itertools.groupby("aabbbc")], list(itertools.accumulate([1, 2, 3])))
print(list(itertools.permutations([1, 2, 3], 2))[:3], list(itertools.zip_longest("ab", "c", fillvalue="-")))
nested = {"a": [1, {"b": 2}]}
deep = copy.deepcopy(nested)
shallow = copy.copy(nested)
deep["a"][1]["b"] = 99
print(nested, deep, shallow["a"] is nested["a"])


class Node:
    def __init__(self, v, children=()):
        self.v = v
        self.children = list(children)


tree = Node(1, [Node(2), Node(3)])
clone = copy.deepcopy(tree)
clone.children[0].v = 20
print(tree.children[0].v, clone.children[0].v, type(clone).__name__)
merged = {**{"a": 1}, **{"b": 2, "a": 3}}
print(merged, {*[1, 2], *[2, 3]}, [*range(3), *"ab"])
a, *rest = [1, 2, 3, 4]
(x, y), z = (1, 2), 3
print(a, rest, x, y, z)
first, second = sorted({"b": 2, "a": 1}.items(), key=lambda kv: kv[1], reverse=True)
print(first, second)
data = [("a", 2), ("b", 1), ("c", 2), ("d", 1)]
print(sorted(data, key=lambda t: t[1], reverse=True), sorted(data, key=lambda t: t[1]))
