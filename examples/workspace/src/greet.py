"""A tiny module the demo tour reads and edits."""


def greet(name: str) -> str:
    return "Hello, " + name + "!"


def farewell(name: str) -> str:
    return "Goodbye, " + name + "."


if __name__ == "__main__":
    print(greet("world"))
