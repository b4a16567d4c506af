// (being written: issue 11)
