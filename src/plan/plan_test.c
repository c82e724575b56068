#include "plan.h"
int main(void){return 0;}
