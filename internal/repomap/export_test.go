package repomap

// Render is render, for the tests.
var Render = render
