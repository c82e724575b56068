#define _DEFAULT_SOURCE
#include "test.h"
int main(void){return 0;}
