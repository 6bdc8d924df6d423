# decimal's context: what getcontext() hands out is the context the arithmetic reads
from decimal import Decimal, getcontext, localcontext, DivisionByZero, InvalidOperation
import decimal

third = Decimal(2) / Decimal(3)
print(third, getcontext().prec)
getcontext().prec = 40
print(Decimal(2) / Decimal(3))
print(Decimal(10) ** -30 + Decimal(1))
getcontext().prec = 6
print(Decimal("3.14159265") * 1, Decimal(1) / Decimal(81))
with localcontext() as ctx:
    ctx.prec = 3
    print(Decimal(22) / Decimal(7), getcontext().prec)
print(Decimal(22) / Decimal(7), getcontext().prec)
getcontext().rounding = decimal.ROUND_DOWN
print(Decimal(5) / Decimal(3))
try:
    Decimal(1) / Decimal(0)
except DivisionByZero as e:
    print("trapped", type(e).__name__)
getcontext().traps[DivisionByZero] = False
print(Decimal(-1) / Decimal(0))
try:
    Decimal("nan") < 1
except InvalidOperation:
    print("invalid")


# annotations are evaluated when the function is defined (no postponed evaluation without the __future__ import)
def scaled(value: float, by: int = 2) -> float:
    return value * by


print(scaled.__annotations__, scaled(1.5))
