// (being written: issue 13)
