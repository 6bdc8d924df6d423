s = "Hello, World"
print(s.lower(), s.upper(), s.split(", "), s.replace("l", "L", 2), s[::-1], s[1:5], s.find("o"), s.count("l"))
print("-".join(["a", "b"]), " pad ".strip(), "x".center(5, "*"), "42".zfill(5), "a,b,,c".split(","))
print("{} + {} = {}".format(1, 2, 3), "{name}!".format(name="hi"), "%d items %.1f%%" % (3, 12.345), "%s" % [1])
print(f"{'nested'!r} {3 * 4} {s!s:>15} {[1, 2]}", "abc" * 3, "a" < "b", ord("a"), chr(98), "ß".upper())
print(repr("quote'\"s"), str(b"bytes"), "tab\tsep".expandtabs(4), "line1\nline2".splitlines(), len("héllo"))
print(s.startswith(("He", "x")), s.endswith("ld"), "abc".isalpha(), "12".isdigit(), " ".isspace(), s.title())
print("{:>8.3f}|{:<6}|{:^7}|{:+d}".format(3.14159, "ab", "mid", 5), format(0.5, ".0%"), format(1e-7, "g"))
words = ["banana", "Apple", "cherry"]
print(sorted(words), sorted(words, key=str.lower), max(words, key=len), "".join(reversed("abc")))
table = {w: len(w) for w in words}
print(table, list(table.items())[0], sorted(table, key=table.get))
print(str(1.0), str(1e16), str(1e-5), repr(0.1), 1 / 3, 2 / 3 * 3, str(True), None, [None, True, 1.0])
