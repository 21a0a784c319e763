# Diagnosis only: uuid4() values whose hex starts with a letter, so that collection names a suite
# makes from uuid4().hex pass Cairn's current name check and the failures behind it show.
import uuid

_orig = uuid.uuid4


def _letter_uuid4():
    h = _orig().hex
    if h[0].isdigit():
        h = "a" + h[1:]
    return uuid.UUID(h)


uuid.uuid4 = _letter_uuid4
