package testrun

// CopyNew is copyNew, for the benchmark of a cache layer's copy.
var CopyNew = copyNew
