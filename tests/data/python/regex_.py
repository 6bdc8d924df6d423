"""re as CPython runs it (each search under the run's timer: tapecli/execution/regex.py)."""
import re
text = "The quick brown fox, 42 jumps; over 7 lazy dogs! email: a.b@c.com"
print(re.findall(r"\w+", text)[:5], re.findall(r"(\d)(\d)?", text))
print(re.sub(r"\s+", " ", "a   b \t c"), re.subn(r"o", "0", text)[1])
print(re.split(r"[,;!]\s*", text), re.split(r"(\d+)", "a1b22c", 1))
m = re.search(r"(?P<user>[\w.]+)@(?P<host>\w+\.com)", text)
print(m.group("user"), m.groupdict(), m.span(), m.start(2))
p = re.compile(r"\b[a-z]{4}\b", re.I)
print(p.findall(text), p.pattern, p.flags == re.I | re.U, isinstance(p, re.Pattern), bool(p.match("over")))
print([mm.group() for mm in re.finditer(r"\d+", text)], re.fullmatch(r"\d+", "123") is not None)
print(re.sub(r"(\w+)@(\w+)", r"\2 at \1", "x@y"), re.sub(r"\d", lambda m: str(int(m.group()) * 2), "a1b2"))
print(re.escape("a.b*c"), repr(re.compile("x")), re.match("a", "ba"), p.search("over", 30))
try:
    re.compile("(")
except re.error as e:
    print("error:", e)
tokens = [t.lower() for t in re.findall(r"[A-Za-z']+", "Don't stop; it's FINE")]
print(tokens, re.compile(r"x*").sub("-", "abc"))
