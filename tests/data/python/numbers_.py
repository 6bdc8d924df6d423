print(2 ** 64 - 1, 10 ** 20 // 10 ** 19, 2 ** 100, float(2 ** 100), -7 // 2, -7 % 3, divmod(-7, 2))
print(round(2.5), round(3.5), round(-0.5), round(2.675, 2), round(1234, -2))
print(sum([True, True, False]), True + True, 7 / 2, 7 // 2, 1e300 * 1e10, 0.1 + 0.2)
print(int("  42 "), int(3.9), int(-3.9), float("1e-3"), abs(-2 ** 70), 10 ** -2, pow(3, 4, 5))
print(hex(255), bin(10), oct(8), int("ff", 16), 1_000_000, 5 .bit_length(), (255).to_bytes(2, "big"))
print(complex(1, 2) * 2, 3 + 4j, abs(3 + 4j), max(1, 2.5), min([3, 1, 2]), sorted([3.5, -1, 2]))
print(1 < 2 < 3, 1 == 1.0, 0.1 * 3 == 0.3, isinstance(True, int), type(1.5).__name__, type(3).__name__)
print(f"{3.14159:.2f} {42:05d} {1234567:,} {0.5:%} {'x':>4}|{'y':<3}|{7:^5}|")
x = 10
x //= 3
x **= 5
x <<= 2
print(x, 1 << 70, (1 << 70) >> 69, ~5, 6 & 3, 6 | 3, 6 ^ 3)
import math
print(math.floor(2.7), math.ceil(2.1), math.sqrt(16), math.pi, math.isclose(0.1 + 0.2, 0.3), math.factorial(25))
print(math.gcd(12, 18), math.inf > 10 ** 400, math.log(math.e), math.prod([1, 2, 3, 4]), math.comb(10, 3))
