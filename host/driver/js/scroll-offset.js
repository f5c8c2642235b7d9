// How far this document is scrolled: [x, y] in CSS pixels.
[scrollX, scrollY]
