"""Held-out pairs for 01_relu_sign_cases."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "01_relu_sign_cases"

CLASSMATE_SIGN = '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    value = np.asarray(z, dtype=float)
    if value.shape != ():
        raise ValueError(f"expected one number, got shape {value.shape}")
    if value != value:
        raise ValueError("NaN has no sign case")
    if value == 0:
        return "C"
    return "A" if value > 0 else "B"
'''

PAIRS = [
    Pair("renamed", "preactivation", SOLUTION, '''def preactivation(inputs, weights, bias):
    """z = x · w + b over the last axis; x: (..., d), w: (d,), b: scalar -> z: (...)."""
    return np.asarray(inputs, dtype=float) @ np.asarray(weights, dtype=float) + bias
'''),
    Pair("parentheses", "preactivation", SOLUTION, '''def preactivation(x, w, b):
    """z = x · w + b over the last axis; x: (..., d), w: (d,), b: scalar -> z: (...)."""
    return (np.asarray(x, dtype=float) @ np.asarray(w, dtype=float)) + b
'''),
    Pair("temporaries", "preactivation", SOLUTION, '''def preactivation(x, w, b):
    """z = x · w + b over the last axis; x: (..., d), w: (d,), b: scalar -> z: (...)."""
    xs = np.asarray(x, dtype=float)
    ws = np.asarray(w, dtype=float)
    z = xs @ ws + b
    return z
'''),
    Pair("independent", "preactivation", SOLUTION, '''def preactivation(x, w, b):
    """z = x · w + b over the last axis; x: (..., d), w: (d,), b: scalar -> z: (...)."""
    x = np.array(x, dtype=np.float64)
    total = np.zeros(x.shape[:-1])
    for i, wi in enumerate(w):
        total = total + x[..., i] * wi
    return total + b
'''),
    Pair("commented", "sign_case", SOLUTION, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    # turn whatever we got into a float array
    z = np.asarray(z, dtype=float)
    # only scalars allowed
    if z.ndim != 0:
        raise ValueError(f"sign_case takes one number (a scalar or a 0-d array), got an array of shape {z.shape}")
    # NaN is neither positive nor negative
    if np.isnan(z):
        raise ValueError("z is NaN: it has no sign case")
    if z > 0:
        return "A"  # positive
    if z < 0:
        return "B"  # negative
    return "C"  # exactly zero
'''),
    Pair("renamed", "sign_case", SOLUTION, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    val = np.asarray(z, dtype=float)
    if val.ndim != 0:
        raise ValueError(f"sign_case needs a single number, got an array of shape {val.shape}")
    if np.isnan(val):
        raise ValueError("value is NaN, no sign case")
    if val > 0:
        return "A"
    if val < 0:
        return "B"
    return "C"
'''),
    Pair("reordered", "sign_case", SOLUTION, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    z = np.asarray(z, dtype=float)
    if z.ndim != 0:
        raise ValueError(f"sign_case takes one number (a scalar or a 0-d array), got an array of shape {z.shape}")
    if np.isnan(z):
        raise ValueError("z is NaN: it has no sign case")
    if z < 0:
        return "B"
    if z > 0:
        return "A"
    return "C"
'''),
    Pair("dead_code", "sign_case", SOLUTION, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    z = np.asarray(z, dtype=float)
    debug = False
    if z.ndim != 0:
        raise ValueError(f"sign_case takes one number (a scalar or a 0-d array), got an array of shape {z.shape}")
    if np.isnan(z):
        raise ValueError("z is NaN: it has no sign case")
    if debug:
        print("z =", z)
    if z > 0:
        return "A"
    if z < 0:
        return "B"
    return "C"
'''),
    Pair("reformatted", "sign_case", CLASSMATE_SIGN, '''def sign_case( z ):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    value = np.asarray( z, dtype = float )
    if value.shape != (): raise ValueError( f"expected one number, got shape {value.shape}" )
    if value != value: raise ValueError( "NaN has no sign case" )
    if value == 0: return "C"
    return ("A"
            if value > 0
            else "B")
'''),
    Pair("temporaries", "sign_case", CLASSMATE_SIGN, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    value = np.asarray(z, dtype=float)
    shape = value.shape
    if shape != ():
        raise ValueError(f"expected one number, got shape {value.shape}")
    is_nan = value != value
    if is_nan:
        raise ValueError("NaN has no sign case")
    if value == 0:
        return "C"
    answer = "A" if value > 0 else "B"
    return answer
'''),
    Pair("independent", "sign_case", SOLUTION, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    arr = np.asarray(z)
    if arr.size != 1 or arr.ndim > 0:
        raise ValueError("sign_case: give me exactly one number (scalar or 0-d array)")
    number = float(arr)
    if math.isnan(number):
        raise ValueError("cannot classify NaN")
    return {1.0: "A", -1.0: "B", 0.0: "C"}[math.copysign(1.0, number) if number else 0.0]
'''),
    Pair("independent", "sign_case", CLASSMATE_SIGN, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    try:
        number = float(z)
    except TypeError:
        raise ValueError("sign_case wants a single number") from None
    if np.ndim(z) != 0:
        raise ValueError("sign_case wants a single number, not an array")
    cases = ["C", "A", "B"]
    if number > 0:
        index = 1
    elif number < 0:
        index = 2
    elif number == 0:
        index = 0
    else:
        raise ValueError("NaN")
    return cases[index]
'''),
    Pair("renamed", "relu", SOLUTION, '''def relu(values):
    """ReLU(z) = max(0, z) elementwise; z: any shape -> same shape."""
    return np.maximum(np.asarray(values, dtype=float), 0.0)
'''),
    Pair("commented", "relu", SOLUTION, '''def relu(z):
    """ReLU(z) = max(0, z) elementwise; z: any shape -> same shape."""
    # max with zero, elementwise, after converting to floats
    return np.maximum(np.asarray(z, dtype=float), 0.0)  # negative -> 0
'''),
    Pair("free_cell", "relu", SOLUTION, '''def relu(z):
    """ReLU(z) = max(0, z) elementwise; z: any shape -> same shape."""
    return my_relu(z)
''', free='''def my_relu(z):
    return np.maximum(np.asarray(z, dtype=float), 0.0)

print(my_relu([-1, 0, 2]))
'''),
    Pair("independent", "relu", SOLUTION, '''def relu(z):
    """ReLU(z) = max(0, z) elementwise; z: any shape -> same shape."""
    z = np.array(z, dtype=float)
    z[z < 0] = 0.0
    return z
'''),
    Pair("renamed", "relu_grad", SOLUTION, '''def relu_grad(pre):
    """dReLU/dz elementwise: 1.0 where z > 0, else 0.0 (0 at z = 0); z: any shape -> same shape."""
    return (np.asarray(pre, dtype=float) > 0).astype(float)
'''),
    Pair("temporaries", "relu_grad", SOLUTION, '''def relu_grad(z):
    """dReLU/dz elementwise: 1.0 where z > 0, else 0.0 (0 at z = 0); z: any shape -> same shape."""
    arr = np.asarray(z, dtype=float)
    positive = arr > 0
    return positive.astype(float)
'''),
    Pair("dead_code", "relu_grad", SOLUTION, '''def relu_grad(z):
    """dReLU/dz elementwise: 1.0 where z > 0, else 0.0 (0 at z = 0); z: any shape -> same shape."""
    shape = np.shape(z)
    if False:
        return np.ones(shape)
    return (np.asarray(z, dtype=float) > 0).astype(float)
'''),
    Pair("independent", "relu_grad", SOLUTION, '''def relu_grad(z):
    """dReLU/dz elementwise: 1.0 where z > 0, else 0.0 (0 at z = 0); z: any shape -> same shape."""
    return np.where(np.asarray(z) > 0, 1.0, 0.0)
'''),
    Pair("reformatted", "preactivation", SOLUTION, '''def preactivation(x,w,b):
    """z = x · w + b over the last axis; x: (..., d), w: (d,), b: scalar -> z: (...)."""
    return np.asarray(x,dtype=float)@np.asarray(w,dtype=float)+b
'''),
    Pair("free_cell", "preactivation", SOLUTION, '''def preactivation(x, w, b):
    """z = x · w + b over the last axis; x: (..., d), w: (d,), b: scalar -> z: (...)."""
    return pre(x, w, b)
''', free='''def pre(x, w, b):
    return np.asarray(x, dtype=float) @ np.asarray(w, dtype=float) + b

pre([1.0, 2.0], [0.5, -1.0], 0.25)
'''),
    Pair("parentheses", "relu_grad", SOLUTION, '''def relu_grad(z):
    """dReLU/dz elementwise: 1.0 where z > 0, else 0.0 (0 at z = 0); z: any shape -> same shape."""
    return ((np.asarray(z, dtype=float)) > (0)).astype(float)
'''),
    Pair("parentheses", "sign_case", SOLUTION, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    z = (np.asarray(z, dtype=float))
    if (z.ndim != 0):
        raise ValueError(f"sign_case takes one number (a scalar or a 0-d array), got an array of shape {z.shape}")
    if (np.isnan(z)):
        raise ValueError("z is NaN: it has no sign case")
    if (z > 0):
        return ("A")
    if (z < 0):
        return ("B")
    return ("C")
'''),
    Pair("reformatted", "sign_case", SOLUTION, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    z = np.asarray(z, dtype=float)

    if z.ndim != 0: raise ValueError(f"sign_case takes one number (a scalar or a 0-d array), got an array of shape {z.shape}")
    if np.isnan(z): raise ValueError("z is NaN: it has no sign case")

    if z > 0: return "A"
    if z < 0: return "B"
    return "C"
'''),
    Pair("free_cell", "sign_case", CLASSMATE_SIGN, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    return classify(z)
''', free='''def classify(number):
    value = np.asarray(number, dtype=float)
    if value.shape != ():
        raise ValueError(f"expected one number, got shape {value.shape}")
    if value != value:
        raise ValueError("NaN has no sign case")
    if value == 0:
        return "C"
    return "A" if value > 0 else "B"
'''),
    Pair("commented", "sign_case", CLASSMATE_SIGN, '''def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    value = np.asarray(z, dtype=float)
    # arrays with more than one number are not allowed
    if value.shape != ():
        raise ValueError(f"expected one number, got shape {value.shape}")
    # NaN is the only value not equal to itself
    if value != value:
        raise ValueError("NaN has no sign case")
    if value == 0:
        return "C"  # -0.0 counts as zero too
    return "A" if value > 0 else "B"
'''),
]
