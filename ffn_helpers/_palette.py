"""The course's colours: the Okabe–Ito palette and what each colour means in a figure.

Below `plots`, `_course_figure` and `widgets`, which all take their colours from here; it imports nothing.
The palette stays distinguishable under the common colour-vision deficiencies; every colour is named once here.
"""

# Okabe & Ito (2008), "Color Universal Design".
BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
GREY = "#999999"
OKABE_ITO = (ORANGE, SKY_BLUE, BLUISH_GREEN, BLUE, VERMILION, REDDISH_PURPLE, YELLOW, BLACK)

# What the colours mean in the course's figures.
POSITIVE = BLUE
NEGATIVE = VERMILION
ZERO = GREY
INPUT_FACE = "#FFFFFF"
ACTIVE_FACE = "#CCE3F6"  # a light tint of SKY_BLUE: an active hidden unit
OUTPUT_FACE = "#FBE5B6"  # a light tint of ORANGE
INACTIVE_FACE = "#E3E3E3"  # a hidden unit with h == 0
INACTIVE_TEXT = "#595959"  # legible on INACTIVE_FACE (contrast 5.5 : 1; WCAG asks 4.5)
NODE_TEXT = BLACK
