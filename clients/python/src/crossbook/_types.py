"""What the methods take for times, dates and amounts."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Union

#: A time: Unix milliseconds (from 2001 on), an RFC 3339 string, a date, or an aware `datetime` (sent in UTC).
TimeArg = Union[int, str, datetime.datetime, datetime.date]
#: A date: `YYYY-MM-DD`, or a `date`.
DateArg = Union[str, datetime.date]
#: An amount, sent exactly as written: an `int`, a `Decimal`, a string, or a `float` (sent as Python prints it).
NumberArg = Union[int, float, Decimal, str]
