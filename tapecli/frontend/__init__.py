"""The front end: grammar text, AST with positions, the parser and its syntax errors, static checks."""
