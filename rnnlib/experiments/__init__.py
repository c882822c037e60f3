"""The experiments of the book: one module per chapter, each computing what its chapter shows."""
