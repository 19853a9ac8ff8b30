/* vslint's entry point. Everything else lives in the static library so tests link it too. */
#include "daemon/cli.h"

int main(int argc, char **argv)
{
    return vsl_main(argc, argv);
}
